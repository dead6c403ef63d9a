// CodeMirror 6 for the file pane: highlighting by file extension, search (Ctrl/Cmd-F), undo history, line
// numbers, read-only until Edit. Imported only by <pooled-code-editor> through import(), so its ~150 kB
// stay out of the start page and load when a file is first opened.
import { basicSetup } from 'codemirror';
import { Compartment, EditorState, type Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { css } from '@codemirror/lang-css';
import { html } from '@codemirror/lang-html';
import { javascript } from '@codemirror/lang-javascript';
import { json } from '@codemirror/lang-json';
import { oneDark } from '@codemirror/theme-one-dark';

/** The language of a file by its extension; plain text for the rest. */
function languageFor(path: string): Extension {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  switch (ext) {
    case 'html': case 'htm': return html();
    case 'css': return css();
    case 'js': case 'mjs': case 'cjs': return javascript();
    case 'jsx': return javascript({ jsx: true });
    case 'ts': case 'mts': return javascript({ typescript: true });
    case 'tsx': return javascript({ jsx: true, typescript: true });
    case 'json': return json();
    default: return [];
  }
}

export interface CodeEditorHandle {
  /** The text as it stands (edits included). */
  text(): string;
  /** Shows another file (or the same file's new text): a fresh state, so undo does not cross files. */
  show(path: string, text: string): void;
  setEditable(on: boolean): void;
  focus(): void;
  destroy(): void;
}

/** A CodeMirror view in `parent`, inside a shadow root (`root`) so its styles are mounted there. */
export function createCodeEditor(o: { parent: HTMLElement; root: ShadowRoot; path: string; text: string; editable: boolean; label: string }): CodeEditorHandle {
  const editable = new Compartment();
  const readOnly = (on: boolean) => [EditorView.editable.of(on), EditorState.readOnly.of(!on)];
  const stateFor = (path: string, text: string, on: boolean) => EditorState.create({
    doc: text,
    extensions: [
      basicSetup, oneDark, languageFor(path), editable.of(readOnly(on)),
      // tabindex: a read-only file (not contenteditable) is still reached and scrolled from the keyboard.
      EditorView.contentAttributes.of({ 'aria-label': o.label, 'data-testid': 'file-editor', tabindex: '0' }),
      // The line numbers lighter than one-dark's (#7d8799 on #282c34 is under 4.5:1 contrast).
      EditorView.theme({ '&': { height: '100%', fontSize: '13px' }, '.cm-scroller': { fontFamily: 'var(--mono, ui-monospace, monospace)' },
        '.cm-gutters': { color: '#a3adbb' } }),
    ],
  });
  let on = o.editable;
  const view = new EditorView({ state: stateFor(o.path, o.text, on), parent: o.parent, root: o.root });
  return {
    text: () => view.state.doc.toString(),
    show: (path, text) => view.setState(stateFor(path, text, on)),
    setEditable: (next) => { on = next; view.dispatch({ effects: editable.reconfigure(readOnly(next)) }); },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}
