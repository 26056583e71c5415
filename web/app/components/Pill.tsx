/** A small status label. Its colour follows `tone`; the words carry the meaning on their own. */
import type { ComponentChildren } from "preact";

export function Pill(
  { tone = "wait", children, testId }: {
    tone?: string;
    children: ComponentChildren;
    testId?: string;
  },
) {
  return <span class={`pill ${tone}`} data-testid={testId}>{children}</span>;
}
