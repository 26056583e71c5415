/** A button that copies `text` to the clipboard, and says whether it could. */
import { useState } from "preact/hooks";

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState<string | null>(null);
  return (
    <>
      <button
        type="button"
        class="secondary small"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(text);
            setDone("Copied.");
          } catch {
            setDone("Copying is not allowed here: select the text and copy it.");
          }
        }}
      >
        {label}
      </button>
      <span class="small muted" role="status">{done}</span>
    </>
  );
}
