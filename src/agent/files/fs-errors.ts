// What a file-system error may tell the model (NodeFolderFiles): Node's messages hold the absolute path on
// the user's machine ("ENAMETOOLONG: name too long, open '/home/me/…'"), which is none of the model's
// business and would leak the user's name and folder layout into a transcript. Every fs error leaves the
// store as a ProjectFileError naming the project-relative path, the reason in words and the error code.
import { ProjectFileError, ProjectPathError } from './paths.ts';

/** Reasons in words for the codes a model's path can cause. */
const REASONS: Record<string, string> = {
  ENAMETOOLONG: 'has a name longer than the file system allows (at most 255 bytes per name)',
  EACCES: 'cannot be used: permission denied',
  EPERM: 'cannot be used: operation not permitted',
  ENOSPC: 'cannot be written: the disk is full',
  EROFS: 'cannot be written: the project is on a read-only file system',
  EISDIR: 'is a folder, not a file',
  ENOTDIR: 'has a file where a folder should be on its way',
  EEXIST: 'already exists',
  EINVAL: 'is not a valid name on this file system',
};

/** `e` as the model may see it: our own path errors unchanged; an fs error with no absolute path in it. */
export function projectFsError(root: string, path: string, e: unknown): Error {
  if (e instanceof ProjectPathError || e instanceof ProjectFileError) return e;
  const code = (e as NodeJS.ErrnoException | null)?.code;
  const reason = (code && REASONS[code]) ?? `could not be used (${code ?? (e as Error)?.name ?? 'error'}: ${stripRoot(root, (e as Error)?.message ?? String(e))})`;
  return new ProjectFileError(path, code && REASONS[code] ? `${reason} (${code})` : reason);
}

/** `text` with the project root's absolute path taken out (relative paths stay). */
export function stripRoot(root: string, text: string): string {
  return text.split(root + '/').join('').split(root).join('.');
}
