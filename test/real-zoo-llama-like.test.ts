// The zoo's Llama-like decoders (Llama, Qwen3, Mistral, Phi-3) through the user's four steps (test/helpers/zoo-suite.ts says what is run and checked).
import { zooSuite } from './helpers/zoo-suite.js';

zooSuite('llama-like');
