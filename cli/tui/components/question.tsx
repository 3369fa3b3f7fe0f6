// An inline question from a tool: the current question, its options (↑/↓, Enter), or a typed
// answer in the composer when the question allows one; Esc dismisses.
import { Box, Text } from "ink";
import type { QuestionRequest } from "../../../clients/index.js";

export function QuestionPrompt({ request, index, selected }: { readonly request: QuestionRequest; readonly index: number; readonly selected: number }) {
  const question = request.questions[index];
  if (!question) return null;
  return (
    <Box borderStyle="round" borderColor="yellow" paddingX={1} flexDirection="column">
      <Text>
        <Text color="yellow" bold>
          {question.header}
        </Text>
        {request.questions.length > 1 ? <Text dimColor> ({index + 1}/{request.questions.length})</Text> : null}
      </Text>
      <Text>{question.question}</Text>
      {question.options.map((option, position) => (
        <Text key={option.label} {...(position === selected ? { color: "cyan" } : {})}>
          {position === selected ? "›" : " "} {option.label}
          {option.description ? <Text dimColor> — {option.description}</Text> : null}
        </Text>
      ))}
      {question.custom !== false ? <Text dimColor>or type your own answer and press Enter</Text> : null}
    </Box>
  );
}
