// The tools the app's agent gets: the file tools over the project, and the preview's serve and
// preview_logs, plus run_js unless the deployment turned it off (pooled-config.json "runJs": false,
// POOLED_RUN_JS=0). A tool left out is in neither the tools list nor the prompt the model sees.
import type { ProjectFiles } from '../agent/files/types.ts';
import type { Tool } from '../agent/tool-types.ts';
import { createFileTools, type FileToolOptions } from '../agent/tools/file-tools.ts';
import { createPreviewTools } from '../preview/tools.ts';
import type { PreviewApi } from '../preview/types.ts';

export interface AgentToolOptions extends FileToolOptions {
  /** Default true (a local `npm start`). */
  runJs?: boolean;
}

export function agentTools(files: ProjectFiles, preview: PreviewApi, opts: AgentToolOptions = {}): Tool[] {
  const { runJs = true, ...fileOptions } = opts;
  const previewTools = createPreviewTools(preview).filter((t) => runJs || t.schema.name !== 'run_js');
  return [...createFileTools(files, fileOptions), ...previewTools];
}
