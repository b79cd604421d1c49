import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsJSON, IsOptional, MaxLength } from 'class-validator';

export class ParameterOptionsQueryDto {
  @ApiPropertyOptional({
    description:
      "The node's other parameters as the builder holds them, as a JSON object (e.g. an MCP server's url and credential, whose tools to list)",
    example: '{"url":"https://mcp.example.com/mcp"}',
  })
  @IsOptional()
  @IsJSON({ message: 'parameters must be a JSON object' })
  @MaxLength(100_000)
  parameters?: string;
}

/** One entry of a parameter's dropdown, as `loadOptions` listed it. */
export class ParameterOptionDto {
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }],
    description: 'The value the parameter is set to when the entry is chosen',
    example: 'col_0123456789abcdef',
  })
  value: string | number | boolean;

  @ApiProperty({ example: 'Handbooks' })
  label: string;

  @ApiPropertyOptional({ example: 'col_0123456789abcdef (owner)' })
  description?: string;
}

export class ParameterOptionsDto {
  @ApiProperty({ type: [ParameterOptionDto] })
  items: ParameterOptionDto[];
}
