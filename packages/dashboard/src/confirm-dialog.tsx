/**
 * A modal confirmation (the browser's own `<dialog>`: it keeps the focus inside, Escape cancels,
 * the focus returns to what opened it). With `typeToConfirm`, the action stays unavailable until
 * that exact text is typed — for what cannot be undone.
 * Must not know: what is being confirmed.
 */

import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

export interface ConfirmDialogProps {
  readonly title: string;
  readonly children: ComponentChildren;
  /** The confirming button's text (`Pause gpu-hf`). */
  readonly confirmLabel: string;
  readonly typeToConfirm?: string;
  readonly danger?: boolean;
  readonly onConfirm: () => void;
  readonly onCancel: () => void;
}

export function ConfirmDialog(props: ConfirmDialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const [typed, setTyped] = useState("");
  useEffect(() => {
    const dialog = ref.current;
    if (dialog !== null && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  const ready = props.typeToConfirm === undefined || typed === props.typeToConfirm;
  return (
    <dialog
      ref={ref}
      class="confirm"
      aria-labelledby="confirm-title"
      onCancel={(e) => {
        e.preventDefault();
        props.onCancel();
      }}
    >
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (ready) props.onConfirm();
        }}
      >
        <h3 id="confirm-title">{props.title}</h3>
        <div>{props.children}</div>
        {props.typeToConfirm === undefined ? null : (
          <p>
            <label for="confirm-typed">
              Type <strong>{props.typeToConfirm}</strong> to confirm
            </label>
            <br />
            <input
              id="confirm-typed"
              type="text"
              autocomplete="off"
              spellcheck={false}
              value={typed}
              onInput={(e) => setTyped(e.currentTarget.value)}
            />
          </p>
        )}
        <div class="dialog-buttons">
          <button type="button" class="quiet" onClick={props.onCancel}>
            Cancel
          </button>
          <button type="submit" class={props.danger === true ? "danger" : ""} aria-disabled={!ready}>
            {props.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
