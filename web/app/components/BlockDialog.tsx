/** The confirmation before blocking someone (from a message or from their profile). */
import { Dialog } from "./Dialog.tsx";

/** "Block <name>?": what a block does, before it is done. */
export function BlockDialog(
  { name, onCancel, onConfirm }: {
    name: string | null;
    onCancel: () => void;
    onConfirm: () => void;
  },
) {
  return (
    <Dialog open={name !== null} title={`Block ${name ?? ""}?`} onClose={onCancel}>
      <p>
        They will not be able to message you directly or add you to groups, and their mentions will
        not notify you. In groups you share, their messages are marked. They are not told.
      </p>
      <div class="dialog-actions">
        <button type="button" class="secondary" onClick={onCancel}>Cancel</button>
        <button type="button" class="danger" onClick={onConfirm}>Block</button>
      </div>
    </Dialog>
  );
}
