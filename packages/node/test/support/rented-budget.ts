/**
 * The `budget:` line of a managed rented node in a test's config: none when the caller's lines give
 * one, else `unlimited: true` written down. PAIR refuses a managed node without a budget
 * (budget_required), and a test about something else must not meet a cap it did not ask for.
 * Must not know: which node or test the lines belong to.
 */

export function budgetLines(lines: readonly string[], indent = "    "): string[] {
  return lines.some((l) => l.trim().startsWith("budget:")) ? [] : [`${indent}budget: { unlimited: true }`];
}
