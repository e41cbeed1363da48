/**
 * Evaluates an arithmetic expression: numbers, `+ - * / % **`, parentheses and unary minus. No
 * names, no calls, no `eval`: anything else is a clear error.
 *
 * @throws {Error} naming the position of the first thing it cannot read.
 */
export function calculate(expression: string): number {
  const tokens = tokenize(expression);
  let at = 0;
  const peek = (): string | undefined => tokens[at];
  const take = (): string => tokens[at++]!;
  const fail = (what: string): never => {
    throw new Error(`${what} at token ${at + 1} of "${expression}"`);
  };

  // expression := term (('+' | '-') term)* ; term := power (('*' | '/' | '%') power)*
  // power := unary ('**' power)? ; unary := '-' unary | primary ; primary := number | '(' expression ')'
  const parseExpression = (): number => {
    let value = parseTerm();
    while (peek() === '+' || peek() === '-') value = take() === '+' ? value + parseTerm() : value - parseTerm();
    return value;
  };
  const parseTerm = (): number => {
    let value = parsePower();
    for (let op = peek(); op === '*' || op === '/' || op === '%'; op = peek()) {
      take();
      const right = parsePower();
      value = op === '*' ? value * right : op === '/' ? value / right : value % right;
    }
    return value;
  };
  const parsePower = (): number => {
    const base = parseUnary();
    if (peek() !== '**') return base;
    take();
    return base ** parsePower();
  };
  const parseUnary = (): number => (peek() === '-' ? (take(), -parseUnary()) : parsePrimary());
  const parsePrimary = (): number => {
    const token = peek();
    if (token === undefined) return fail('Unexpected end');
    if (token === '(') {
      take();
      const value = parseExpression();
      if (peek() !== ')') fail('Expected ")"');
      take();
      return value;
    }
    if (/^\d/.test(token) || token.startsWith('.')) return Number(take());
    return fail(`Unexpected "${token}"`);
  };

  const value = parseExpression();
  if (at < tokens.length) fail(`Unexpected "${peek()}"`);
  return value;
}

function tokenize(expression: string): string[] {
  const tokens: string[] = [];
  const pattern = /\s*(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\*\*|[-+*/%()])/y;
  let index = 0;
  while (index < expression.length) {
    if (/^\s*$/.test(expression.slice(index))) break;
    pattern.lastIndex = index;
    const match = pattern.exec(expression);
    if (!match) throw new Error(`Cannot read "${expression.slice(index).trim().slice(0, 20)}" in "${expression}"`);
    tokens.push(match[1]!);
    index = pattern.lastIndex;
  }
  return tokens;
}
