// The zoo's models that are not token-id decoders (Qwen2 on embeddings, BERT, ResNet) through the user's four steps (test/helpers/zoo-suite.ts says what is run and checked).
import { zooSuite } from './helpers/zoo-suite.js';

zooSuite('encoders');
