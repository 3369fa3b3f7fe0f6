// `question`: asking the user from a tool.

/** One selectable choice. */
export interface QuestionOption {
  /** Short display text, 1 to 256 characters. */
  readonly label: string;
  /** Up to 4,096 characters; may be empty. */
  readonly description: string;
}

/** One question for the user. Omit optional fields instead of setting them to `undefined`. */
export interface QuestionPrompt {
  /** The full question, 1 to 4,096 characters. */
  readonly question: string;
  /** Short title, 1 to 30 characters. */
  readonly header: string;
  readonly options: readonly [QuestionOption, ...QuestionOption[]];
  /** Lets the user select more than one option. Absent means false. */
  readonly multiple?: boolean | undefined;
  /** Allows a custom typed answer. Absent means true. */
  readonly custom?: boolean | undefined;
}

/** The answer to one question: the selected labels, or typed text. */
export type QuestionAnswer = readonly string[];

/** A question batch as Core recorded it (carried by the `question.asked` event). */
export interface QuestionRequest {
  readonly id: string;
  readonly sessionId: string;
  readonly turnId: string;
  readonly toolId: string;
  readonly toolCallId: string;
  readonly questions: readonly [QuestionPrompt, ...QuestionPrompt[]];
}
