// Terminal styling: ANSI colour when the context allows it, plain text otherwise.
import type { Ctx } from './context.js';

const codes = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] } as const;
export type Style = keyof typeof codes;

export function styler(ctx: Pick<Ctx, 'color'>) {
  return (style: Style, text: string) => (ctx.color ? `\u001b[${codes[style][0]}m${text}\u001b[${codes[style][1]}m` : text);
}
