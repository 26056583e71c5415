/**
 * A form that is shown for one record at a time (a dialog opened for an order, a report, a
 * product) starts from that record's values.
 */
import { type Inputs, useLayoutEffect } from "preact/hooks";

/**
 * Runs `reset` when `deps` change (the dialog opened for another record), in the same task as the
 * render that shows the form: before the browser paints it or hands the page a key. In a plain
 * effect it ran a frame later (up to 100 ms on a busy phone): the fields showed the previous
 * values meanwhile, and what was typed or picked in that frame was overwritten.
 */
export function useFormReset(reset: () => void, deps: Inputs): void {
  useLayoutEffect(reset, deps);
}
