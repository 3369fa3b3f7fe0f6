// Words zod issues as `<JSON pointer>: <what is allowed>` problems. zod's own messages for a
// failed union are a bare "Invalid input", and the contract's unions are unions of
// intersections discriminated by a literal field (`delivery`, a prompt part's `type`), so the
// issue tree is walked: the member whose discriminator matched is reported, or, when none did,
// the discriminator itself with every value the members allow.

/** The parts of a zod 4 issue this module reads (structural, so any zod 4 issue fits). */
export interface Issue {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly expected?: string;
  /** invalid_value: the allowed values. */
  readonly values?: readonly unknown[];
  /** invalid_union: the issues of each member, paths relative to the union. */
  readonly errors?: readonly (readonly Issue[])[];
  /** invalid_key / invalid_element: the issues of the key or element. */
  readonly issues?: readonly Issue[];
  /** invalid_union of a discriminated union whose discriminator matched no member. */
  readonly discriminator?: string;
  readonly options?: readonly unknown[];
  readonly note?: string;
  /** invalid_union of an exclusive union: false when several members matched. */
  readonly inclusive?: boolean;
}

export interface Problem {
  readonly path: readonly PropertyKey[];
  readonly text: string;
}

/** RFC 6901: `/a/0/b`, with `~` as `~0` and `/` as `~1`; the empty path is the whole value. */
export const pointer = (path: readonly PropertyKey[]): string =>
  path.map((segment) => `/${String(segment).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");

/** Every issue as problems with absolute paths, duplicates removed, in zod's order. */
export function describeIssues(issues: readonly Issue[]): Problem[] {
  const seen = new Set<string>();
  return issues
    .flatMap((issue) => problemsOf(issue, []))
    .filter((problem) => {
      const key = `${pointer(problem.path)}\u0000${problem.text}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

const literal = (value: unknown): string => (typeof value === "string" ? JSON.stringify(value) : String(value));

const oneOf = (values: readonly unknown[]): string =>
  values.length === 1 ? `must be ${literal(values[0])}` : `must be one of ${values.map(literal).join(", ")}`;

/** zod prefixes most messages with a generic "Invalid input: " that says nothing here. */
const plain = (message: string): string => message.replace(/^Invalid (input|option): /, "");

function typeText(issue: Issue): string {
  const message = plain(issue.message);
  if (issue.expected !== undefined && /received undefined$/.test(message)) return `is required (expected ${issue.expected})`;
  return message;
}

function problemsOf(issue: Issue, at: readonly PropertyKey[]): Problem[] {
  const path = [...at, ...issue.path];
  switch (issue.code) {
    case "invalid_union":
      return unionProblems(issue, path);
    case "invalid_value":
      return [{ path, text: oneOf(issue.values ?? []) }];
    case "invalid_type":
      return [{ path, text: typeText(issue) }];
    case "invalid_key":
    case "invalid_element": {
      const what = issue.code === "invalid_key" ? "key" : "element";
      return (issue.issues ?? []).flatMap((inner) => problemsOf(inner, path)).map((problem) => ({ path: problem.path, text: `${what} is invalid: ${problem.text}` }));
    }
    default:
      return [{ path, text: plain(issue.message) }];
  }
}

/** Keys (as pointers) of a member's own issues that reject a single literal: its discriminator failing. */
function literalKeys(member: readonly Issue[]): string[] {
  return member.filter((issue) => issue.code === "invalid_value" && issue.values?.length === 1).map((issue) => pointer(issue.path));
}

/** The member's one failure when it is only a wrong type (repeated by an intersection, perhaps). */
function soleTypeIssue(member: readonly Issue[]): Issue | undefined {
  const first = member[0];
  if (first === undefined || first.code !== "invalid_type") return undefined;
  return member.every((issue) => issue.code === "invalid_type" && pointer(issue.path) === pointer(first.path)) ? first : undefined;
}

/** The member with the fewest distinct issues: the one the input came closest to. */
function closest(members: readonly (readonly Issue[])[]): readonly Issue[] {
  const size = (member: readonly Issue[]): number => new Set(member.map((issue) => `${pointer(issue.path)} ${issue.message}`)).size;
  return members.reduce((best, member) => (size(member) < size(best) ? member : best));
}

function unionProblems(issue: Issue, path: readonly PropertyKey[]): Problem[] {
  if (issue.inclusive === false) return [{ path, text: "matches more than one of the allowed shapes" }];
  // A discriminated union names its discriminator (already in the path) and its options.
  if (issue.discriminator !== undefined && (issue.errors ?? []).length === 0) return [{ path, text: oneOf(issue.options ?? []) }];
  const members = issue.errors ?? [];
  if (members.length === 0) return [{ path, text: plain(issue.message) }];

  // Members no literal ruled out are those whose discriminator matched (or that have none).
  const open = members.filter((member) => literalKeys(member).length === 0);
  if (open.length > 0) {
    // z.union([z.string(), z.number()]) and the like: one wrong type against several allowed ones.
    const types = open.map(soleTypeIssue);
    const first = types[0];
    if (open.length > 1 && first !== undefined && types.every((type) => type !== undefined && pointer(type.path) === pointer(first.path))) {
      const expected = [...new Set(types.map((type) => type?.expected ?? "?"))].join(" or ");
      const received = /, received \w+$/.exec(first.message)?.[0] ?? "";
      return [{ path: [...path, ...first.path], text: typeText({ ...first, expected, message: `expected ${expected}${received}` }) }];
    }
    return closest(open).flatMap((inner) => problemsOf(inner, path));
  }

  // Every member was ruled out by a literal: the field they all reject is the discriminator.
  const shared = literalKeys(members[0]!).find((key) => members.every((member) => literalKeys(member).includes(key)));
  if (shared !== undefined) {
    const rejections = members.flatMap((member) => member.filter((i) => i.code === "invalid_value" && pointer(i.path) === shared));
    const values = [...new Set(rejections.flatMap((rejection) => rejection.values ?? []))];
    return [{ path: [...path, ...rejections[0]!.path], text: oneOf(values) }];
  }
  return closest(members).flatMap((inner) => problemsOf(inner, path));
}
