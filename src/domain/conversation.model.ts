/** One message of a remembered conversation, as a model reads it. */
export interface ConversationMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}
