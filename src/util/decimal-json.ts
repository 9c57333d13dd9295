// Byte counts as decimal strings in the --json documents and the runner's
// report (JSON numbers lose precision past 2^53), as zod schemas; only the
// schema generator and the tests load them at run time.
import { z } from 'zod';

/** A budget: decimal bytes below 2^63 (at most 19 digits). */
export const DecimalBudget = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,18})$/)
  .describe('Decimal bytes below 2^63.');

/** Decimal bytes below 2^64 (at most 20 digits). */
export const DecimalU64 = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,19})$/)
  .describe('Decimal bytes below 2^64.');
