// The zoo's biased models in bfloat16 (Qwen2, GPT-2, BERT) through the user's four steps, and the bfloat16 Qwen2 against eager float32 (test/helpers/zoo-suite.ts says what is run and checked): issue 40.
import { zooSuite } from './helpers/zoo-suite.js';

zooSuite('half-precision');
