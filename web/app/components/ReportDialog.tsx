/**
 * "Report": a small dialog with the reason and an optional note, sent to POST /api/reports. Used
 * from a message (the conversation view) and from a product page (docs/moderation.md).
 */
import { useId, useState } from "preact/hooks";
import { useFormReset } from "../lib/form-reset.ts";
import { ApiError, client, describeError, type Schema } from "../lib/client.ts";
import { Dialog } from "./Dialog.tsx";

export type ReportSubject = Schema<"ReportSubject">;

const REASONS = [
  { value: "spam", label: "Spam" },
  { value: "abuse", label: "Abuse or harassment" },
  { value: "fraud", label: "Fraud or a scam" },
  { value: "other", label: "Something else" },
] as const;
type Reason = (typeof REASONS)[number]["value"];

export function ReportDialog(
  { subject, what, onClose }: {
    subject: ReportSubject | null;
    /** What is reported, for the title ("this message"). */
    what: string;
    onClose: (sent: boolean) => void;
  },
) {
  const reasonId = useId();
  const noteId = useId();
  const [reason, setReason] = useState<Reason>("spam");
  const [note, setNote] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useFormReset(() => {
    setReason("spam");
    setNote("");
    setError(null);
  }, [subject?.id]);
  return (
    <Dialog open={subject !== null} title={`Report ${what}`} onClose={() => onClose(false)}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (!subject) return;
          setBusy(true);
          try {
            await client.POST("/api/reports", {
              body: { subject, reason, ...(note.trim() ? { note: note.trim() } : {}) },
            });
            onClose(true);
          } catch (err) {
            setError(
              err instanceof ApiError && err.status === 409
                ? "You already reported this; a moderator will look at it."
                : describeError(err),
            );
          } finally {
            setBusy(false);
          }
        }}
      >
        <p>A moderator will look at it. The person you report is not told who reported them.</p>
        <label for={reasonId}>Reason</label>
        <select
          id={reasonId}
          value={reason}
          onChange={(e) => setReason(e.currentTarget.value as Reason)}
        >
          {REASONS.map((r) => <option key={r.value} value={r.value}>{r.label}</option>)}
        </select>
        <label for={noteId}>Note (optional)</label>
        <textarea
          id={noteId}
          maxLength={1000}
          value={note}
          onInput={(e) => setNote(e.currentTarget.value)}
        />
        {error && <p class="error" role="alert">{error}</p>}
        <div class="actions">
          <button type="submit" disabled={busy}>Send report</button>
          <button type="button" class="secondary" onClick={() => onClose(false)}>Cancel</button>
        </div>
      </form>
    </Dialog>
  );
}
