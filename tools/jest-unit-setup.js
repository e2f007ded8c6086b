// murmurhash3js-revisited checks each input byte with Number.isInteger before hashing. Inside jest's vm sandbox every such
// global lookup is slow: the check alone made a murmur32 ten times slower than in node, and the shard router, the code
// generator and the Bloom filter hash hundreds of thousands of keys in their specs. The product hands the library only
// TextEncoder or Buffer bytes (libs/shared/shard-router/src/hash.ts, code-generator.ts, bloom-filter.ts), which pass the
// check by construction, so the hashes are the same without it.
require('murmurhash3js-revisited').inputValidation = false;
