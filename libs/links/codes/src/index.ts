// Short codes: Base62, the keyed Feistel scrambler of sequence ids, and the hash strategy (docs/design.md, "Identity, shards and codes").
export { type CodeStrategy, HashCodeStrategy, SequenceCodeStrategy } from './code-generator';
