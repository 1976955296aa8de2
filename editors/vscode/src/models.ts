// The model picker's data: the `model` option of a `tandem/session/configOptions` (or
// `setConfigOption`) result as the panel's dropdown and the "Choose Model…" quick pick show it.
// The choices are the configured model, the session's, then the models the provider lists; when
// the provider's list could not be read, `modelsError` says why (the dropdown's tooltip, the log).
// Pure, shared by the extension, the webview and the unit tests.

import type { ConfigChoice, SessionConfigOptionsResult } from "./protocol";

/** The model in force and what it can be switched to. */
export interface ModelChoices {
  /** The session's model (or, before a session, the one the next session starts with). */
  current: string;
  choices: ConfigChoice[];
  /** Why the provider's list could not be read. */
  error?: string;
}

/** The model option of a configOptions result; `undefined` when the sidecar offers none. */
export function modelChoices(result: SessionConfigOptionsResult): ModelChoices | undefined {
  const option = result.configOptions.find((o) => o.id === "model");
  if (!option) return undefined;
  const error = result.modelsError?.trim();
  return withCurrent({ current: option.currentValue, choices: option.options, ...(error ? { error } : {}) }, option.currentValue);
}

/** `models` with `current` in force; a model that is not among the choices is added first. */
export function withCurrent(models: ModelChoices, current: string): ModelChoices {
  const known = models.choices.some((c) => c.value === current);
  return { ...models, current, choices: known ? models.choices : [{ value: current, name: current }, ...models.choices] };
}

/** Only the one model (before the provider's list was asked for). */
export function singleModel(model: string): ModelChoices {
  return { current: model, choices: [{ value: model, name: model }] };
}

/**
 * The model new sessions start with, from the sidecar's point of view: its configured model is
 * the first choice (described as such).
 */
export function configuredModel(models: ModelChoices | undefined): string | undefined {
  const first = models?.choices[0];
  return first && first.description === "the configured model" ? first.value : undefined;
}

/** One `<option>` of the panel's dropdown. */
export interface SelectOption {
  value: string;
  label: string;
  title: string;
  selected: boolean;
}

/** The dropdown's options: each choice by its name (the value when they differ, as a tooltip). */
export function selectOptions(models: ModelChoices): SelectOption[] {
  return models.choices.map((c) => ({
    value: c.value,
    label: c.name,
    title: [c.name === c.value ? "" : c.value, c.description ?? ""].filter((t) => t !== "").join(" — "),
    selected: c.value === models.current,
  }));
}

/** The dropdown's tooltip: why the provider's models are missing, or what it does. */
export function modelTooltip(models: ModelChoices): string {
  if (models.error) return `The provider's models could not be listed: ${models.error}`;
  return `Model (${models.current}): the next request to the provider uses the one chosen here`;
}

/** A quick pick item for a model (what "Tandem: Choose Model…" lists). */
export interface ModelPickItem {
  label: string;
  description?: string;
  detail?: string;
  picked?: boolean;
  value: string;
}

/** The quick pick's items: the current model marked, the value shown when the name differs. */
export function modelPickItems(models: ModelChoices): ModelPickItem[] {
  return models.choices.map((c) => {
    const notes = [c.name === c.value ? "" : c.value, c.value === models.current ? "(current)" : ""].filter((t) => t !== "");
    return {
      label: c.name,
      value: c.value,
      ...(notes.length > 0 ? { description: notes.join(" ") } : {}),
      ...(c.description ? { detail: c.description } : {}),
      ...(c.value === models.current ? { picked: true } : {}),
    };
  });
}
