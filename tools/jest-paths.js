// Maps the @shortlink/* aliases of tsconfig.base.json for jest, so there is one list of aliases.
const path = require('path');
const { compilerOptions } = require('../tsconfig.base.json');

exports.pathsToModuleNameMapper = () => {
  const mapper = {};
  for (const [alias, [target]] of Object.entries(compilerOptions.paths)) {
    mapper[`^${alias.replace(/[/\\^$.*+?()[\]{}|-]/g, '\\$&')}$`] = path.join(__dirname, '..', target);
  }
  return mapper;
};
