/**
 * A modal dialog on the native <dialog> element: focus moves into it and back, Escape closes it,
 * the rest of the page is inert while it is open.
 */
import type { ComponentChildren } from "preact";
import { useId, useLayoutEffect, useRef } from "preact/hooks";

export function Dialog(
  { open, title, onClose, children, wide }: {
    open: boolean;
    title: string;
    onClose: () => void;
    children: ComponentChildren;
    wide?: boolean;
  },
) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  // Opened and closed in the render that says so (a layout effect): a frame later, keys typed
  // meanwhile went to the page behind it, and the focus came back to the opener after the person
  // had moved on (into the conversation the dialog started).
  useLayoutEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      const opener = document.activeElement as HTMLElement | null;
      dialog.showModal();
      return () => {
        const now = document.activeElement;
        if (!now || now === document.body || dialog.contains(now)) opener?.focus?.();
      };
    }
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      class={wide ? "wide" : undefined}
      aria-labelledby={titleId}
      onClose={() => open && onClose()}
    >
      {open && (
        <div class="dialog-body">
          <div class="dialog-head">
            <h2 id={titleId}>{title}</h2>
            <button type="button" class="icon" aria-label="Close" onClick={onClose}>×</button>
          </div>
          {children}
        </div>
      )}
    </dialog>
  );
}
