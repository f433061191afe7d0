// JSON pointers (RFC 6901) over plain objects: the paths the core names in its validation errors.

export function parsePointer(pointer) {
  if (pointer === '' || pointer === '/') return [];
  if (!pointer.startsWith('/')) throw new Error(`not a JSON pointer: ${pointer}`);
  return pointer.slice(1).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function getAt(doc, pointer) {
  let node = doc;
  for (const key of parsePointer(pointer)) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

/** Sets the value at `pointer`, creating objects (or arrays for numeric keys) on the way. */
export function setAt(doc, pointer, value) {
  const keys = parsePointer(pointer);
  if (keys.length === 0) throw new Error('cannot replace the whole document');
  let node = doc;
  for (let i = 0; i < keys.length - 1; i++) {
    const key = keys[i];
    if (node[key] === null || typeof node[key] !== 'object') node[key] = /^\d+$/.test(keys[i + 1]) ? [] : {};
    node = node[key];
  }
  node[keys[keys.length - 1]] = value;
}

/** Deletes the key at `pointer`, then removes objects it leaves empty (so defaults apply again). */
export function deleteAt(doc, pointer) {
  const keys = parsePointer(pointer);
  const parents = [];
  let node = doc;
  for (const key of keys.slice(0, -1)) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return;
    parents.push([node, key]);
    node = node[key];
  }
  if (node && typeof node === 'object' && !Array.isArray(node)) delete node[keys[keys.length - 1]];
  for (let i = parents.length - 1; i >= 0; i--) {
    const [parent, key] = parents[i];
    const child = parent[key];
    if (child && typeof child === 'object' && !Array.isArray(child) && Object.keys(child).length === 0) {
      delete parent[key];
    } else {
      break;
    }
  }
}

/** True when `prefix` names `path` or one of its ancestors. */
export function isPrefix(prefix, path) {
  return path === prefix || path.startsWith(prefix + '/');
}
