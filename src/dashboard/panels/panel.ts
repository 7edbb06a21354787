// What main.ts needs of a dashboard section; each panel module exports one.
export interface Panel {
  id: string;
  needsKey: boolean;
  init(): void;
  /** Called each time the section is shown (and when the key changes while it is shown). */
  show(): Promise<void> | void;
}
