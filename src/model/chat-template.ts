// The model's chat template (tokenizer_config.json `chat_template`) rendered with @huggingface/jinja.
// Known gaps of the JS renderer vs Python jinja2 are bridged here (docs/platform.md): `null` content fails
// (we pass ""), and `obj|string` throws (the XML templates get non-string argument values as JSON text).
import { Template } from '@huggingface/jinja';
import type { ChatMessage, ToolSchema } from './chat-types.ts';
import { detectToolFormat, xmlParameterText, type ToolFormat } from './tool-format.ts';

export interface RenderOptions {
  addGenerationPrompt?: boolean;   // default true: end with "<|im_start|>assistant\n"
  enableThinking?: boolean;        // default false: Qwen3 then appends "<think>\n\n</think>\n\n"
}

/** The template is missing, does not parse, or fails on these messages. Names where it came from. */
export class ChatTemplateError extends Error {
  override name = 'ChatTemplateError';
  readonly code = 'chat-template';
  constructor(where: string, detail: string, cause?: unknown) {
    super(`${where}: ${detail}`, cause === undefined ? undefined : { cause });
  }
}

export class ChatTemplate {
  readonly source: string;
  readonly format: ToolFormat;
  private readonly template: Template;
  private readonly where: string;
  private readonly specialText: Record<string, string>;

  /** `specialText`: bos_token/eos_token strings some templates use. */
  constructor(source: string, where = 'chat template', specialText: Record<string, string> = {}) {
    this.source = source;
    this.where = where;
    this.specialText = specialText;
    try {
      this.template = new Template(source);
    } catch (cause) {
      throw new ChatTemplateError(where, `does not parse (${(cause as Error).message})`, cause);
    }
    this.format = detectToolFormat(source, where);
  }

  /** From tokenizer_config.json (its `chat_template` is a string, or a list of named templates). */
  static fromTokenizerConfig(config: Record<string, unknown>, where = 'tokenizer_config.json'): ChatTemplate {
    let tpl = config.chat_template;
    if (Array.isArray(tpl)) {
      const named = tpl as { name?: string; template?: string }[];
      tpl = (named.find((t) => t.name === 'tool_use') ?? named.find((t) => t.name === 'default'))?.template;
    }
    if (typeof tpl !== 'string' || tpl.length === 0) throw new ChatTemplateError(where, 'has no chat_template');
    const special: Record<string, string> = {};
    for (const key of ['bos_token', 'eos_token'] as const) {
      const v = config[key];
      if (typeof v === 'string') special[key] = v;
      else if (v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string') {
        special[key] = (v as { content: string }).content;
      }
    }
    return new ChatTemplate(tpl, `${where} chat_template`, special);
  }

  /** The whole conversation as text: system, user, assistant (with tool calls), tool results, tools list. */
  render(messages: ChatMessage[], tools: ToolSchema[], opts: RenderOptions = {}): string {
    const items = {
      messages: messages.map((m) => this.toTemplateMessage(m)),
      tools: tools.length > 0 ? tools.map((t) => ({ type: 'function', function: t })) : undefined,
      add_generation_prompt: opts.addGenerationPrompt ?? true,
      enable_thinking: opts.enableThinking ?? false,
      ...this.specialText,
    };
    try {
      return this.template.render(items);
    } catch (cause) {
      throw new ChatTemplateError(this.where, `failed to render (${(cause as Error).message})`, cause);
    }
  }

  private toTemplateMessage(m: ChatMessage): Record<string, unknown> {
    const content = m.content ?? '';
    if (m.role !== 'assistant' || !m.tool_calls || m.tool_calls.length === 0) return { ...m, content };
    return {
      role: 'assistant',
      content,
      tool_calls: m.tool_calls.map((c) => ({
        type: 'function',
        function: { name: c.name, arguments: this.format === 'xml' ? stringifyValues(c.arguments) : c.arguments },
      })),
    };
  }
}

function stringifyValues(args: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(args)) out[k] = xmlParameterText(v);
  return out;
}
