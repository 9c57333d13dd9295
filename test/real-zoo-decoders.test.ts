// The zoo's the other decoders (OLMo, Gemma 3, GPT-2) through the user's four steps (test/helpers/zoo-suite.ts says what is run and checked).
import { zooSuite } from './helpers/zoo-suite.js';

zooSuite('decoders');
