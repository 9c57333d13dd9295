// The 80-line function rule for the runner's C++ (issue 28), the C++ twin of
// eslint's max-lines-per-function (eslint.config.js: max 80, blank and
// comment-only lines skipped). The code is clang-formatted (Google style,
// native-runner/.clang-format), so a definition's body opens on its signature's
// last line; the body counts from that `{` line to its matching `}` line. A
// definition is any function body that no other function encloses: at
// namespace scope or inside a class body (a member defined in place), so a
// lambda or block inside a function counts toward that function. Comments,
// string and character literals and preprocessor lines are read past so their
// braces do not count.

export const MAX_FUNCTION_LINES = 80;
/** Where the rule applies: the runner's own C++ and CUDA sources. */
export const FUNCTION_RULE_DIR = 'native-runner/src/';
export const FUNCTION_RULE_EXTENSIONS = ['cpp', 'cu', 'h'];

// A brace whose head starts with one of these opens a scope, not a function body.
const SCOPE_KEYWORDS = /^(?:template\s*<[^]*>\s*)?(?:namespace|struct|class|enum|union|extern|typedef)\b/;

/** Whether a head opens a scope; a class body's access label (`public:`) before it is read past. */
function isScopeHead(head) {
  return SCOPE_KEYWORDS.test(head.trim().replace(/^(?:(?:public|protected|private)\s*:\s*)+/, ''));
}

/** Whether the function rule applies to this repository-relative path. */
export function holdsFunctionRule(path) {
  if (!path.startsWith(FUNCTION_RULE_DIR)) return false;
  return FUNCTION_RULE_EXTENSIONS.includes(path.slice(path.lastIndexOf('.') + 1));
}

/** The name a head declares: the qualified identifier before its first `(`, or null (a lambda). */
function declaredName(head) {
  const open = head.indexOf('(');
  const m = /((?:[A-Za-z_~][\w]*::)*(?:operator\s*\S+?|~?[A-Za-z_]\w*))\s*$/.exec(head.slice(0, open));
  return m ? m[1] : null;
}

// What may follow a definition's parameter list before its body: qualifiers, a
// trailing return type, or a constructor's initializer list (ending in `)` or `{}`).
const AFTER_PARAMETERS = /^\s*(?:(?:const|noexcept|override|final|mutable|&&?)\s*)*(?:->.*|:.*[)}])?\s*$/;

/** Whether the text before a `{` makes it a function body (a definition or a lambda at namespace scope). */
function isFunctionHead(head) {
  const h = head.trim();
  const close = h.lastIndexOf(')');
  return close !== -1 && !SCOPE_KEYWORDS.test(h) && AFTER_PARAMETERS.test(h.slice(close + 1));
}

/**
 * The functions of a clang-formatted C++ text that no function encloses (at
 * namespace scope or in a class body): name, the 1-based line of the body's
 * `{`, and its length in non-blank, non-comment lines from that line to the
 * matching `}`.
 */
export function cppFunctions(text) {
  const lines = text.split('\n');
  const hasCode = new Array(lines.length).fill(false);
  const stack = []; // open braces: { line, head, isFunction, isScope, outer }
  const heads = ['']; // per depth, the code since the last `;`, `{` or block `}`
  const found = [];
  let inBlockComment = false;
  for (let ln = 0; ln < lines.length; ln++) {
    const line = lines[ln];
    if (!inBlockComment && /^\s*#/.test(line)) {
      // A preprocessor line (and its continuations) is code but holds no braces of the program.
      hasCode[ln] = true;
      while (lines[ln].endsWith('\\') && ln + 1 < lines.length) hasCode[++ln] = true;
      continue;
    }
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (inBlockComment) {
        if (c === '*' && line[i + 1] === '/') {
          inBlockComment = false;
          i++;
        }
        continue;
      }
      if (c === '/' && line[i + 1] === '/') break;
      if (c === '/' && line[i + 1] === '*') {
        inBlockComment = true;
        i++;
        continue;
      }
      if (/\s/.test(c)) {
        heads[stack.length] += ' ';
        continue;
      }
      hasCode[ln] = true;
      if (c === '"' || c === "'") {
        // A literal: skip to its closing quote, past escapes (literals do not span lines here).
        let j = i + 1;
        while (j < line.length && line[j] !== c) j += line[j] === '\\' ? 2 : 1;
        heads[stack.length] += c + c;
        i = j;
      } else if (c === '{') {
        const head = heads[stack.length];
        const isScope = isScopeHead(head);
        // Outer: every enclosing brace is a namespace, class or other scope, none a function or initializer.
        const outer = stack.every((s) => s.isScope);
        stack.push({ line: ln, head, isFunction: !isScope && isFunctionHead(head), isScope, outer });
        heads[stack.length] = '';
      } else if (c === '}') {
        const open = stack.pop();
        if (!open) continue; // unbalanced: not ours to judge, the compiler is
        const atColumn0 = i === 0;
        if (open.isFunction && open.outer) {
          let n = 0;
          for (let k = open.line; k <= ln; k++) if (hasCode[k]) n++;
          found.push({ name: declaredName(open.head) ?? 'a lambda', line: open.line + 1, lines: n });
        }
        // A block's end starts a new declaration; a brace initializer (`x_{x}`) stays part of its head.
        if (open.isFunction || open.isScope || atColumn0) heads[stack.length] = '';
        else heads[stack.length] += '{}';
      } else if (c === ';') {
        heads[stack.length] = '';
      } else {
        heads[stack.length] += c;
      }
    }
  }
  return found;
}

/** The functions of a text over `max` lines. */
export function longFunctions(text, max = MAX_FUNCTION_LINES) {
  return cppFunctions(text).filter((f) => f.lines > max);
}
