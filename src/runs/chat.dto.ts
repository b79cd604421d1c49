import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { anyJson } from '../common/response-schemas';
import { RUN_STATUSES, RunStatus } from '../domain/run.model';
import { RunErrorDto } from './run-responses.dto';

export const MAX_CHAT_MESSAGE = 20_000;
export const MAX_SESSION_ID = 128;

/** One message to a published workflow whose trigger is `chat-trigger`. */
export class ChatMessageDto {
  @ApiProperty({
    example: 'user-42-conversation-1',
    description: `The conversation the message belongs to (1-${MAX_SESSION_ID} visible ASCII characters); the trigger hands it on, so an agent can keep one memory per session`,
  })
  @IsString()
  @Matches(new RegExp(`^[\\x21-\\x7e]{1,${MAX_SESSION_ID}}$`), {
    message: `sessionId must be 1 to ${MAX_SESSION_ID} visible ASCII characters (no spaces)`,
  })
  sessionId: string;

  @ApiProperty({ example: 'How tall is Etna?', description: `What the user says (1-${MAX_CHAT_MESSAGE} characters)` })
  @IsString()
  @Length(1, MAX_CHAT_MESSAGE, { message: `message must be 1 to ${MAX_CHAT_MESSAGE} characters` })
  message: string;
}

export class ChatQueryDto {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description:
      '`false`: answer once, in JSON, when the run finished (as `Accept: application/json` without `text/event-stream` does); default: Server-Sent Events',
  })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'stream must be true or false' })
  stream?: 'true' | 'false';
}

/** The chat's answer: the JSON mode's body, and the data of the stream's `done` event. */
export class ChatAnswerDto {
  @ApiProperty()
  runId: string;

  @ApiProperty({
    enum: RUN_STATUSES,
    description:
      'succeeded, failed or canceled; queued, running or waiting when the answer stopped waiting for it (read GET /api/v1/runs/{id} later)',
  })
  status: RunStatus;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description:
      "The answer as text: the run's output when it is a string, else its `answer`, `text`, `output` or `content` field, the first that is a string (a one-element array counts as its element); null otherwise (see output)",
  })
  answer: string | null;

  @ApiProperty(anyJson("The run's output (its respond node's input, else its end node's output), masked; null until it succeeded"))
  output: unknown;

  @ApiProperty({ type: RunErrorDto, nullable: true })
  error: RunErrorDto | null;
}
