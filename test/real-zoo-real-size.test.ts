// The zoo's Llama-3.2-shaped decoders at CI size, float32, bfloat16 and float16, through the user's four steps (test/helpers/zoo-suite.ts says what is run and checked).
import { zooSuite } from './helpers/zoo-suite.js';

zooSuite('real-size');
