import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** One entry of a parameter's dropdown, as `loadOptions` listed it. */
export class ParameterOptionDto {
  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }], description: 'The value the parameter is set to when the entry is chosen', example: 'col_0123456789abcdef' })
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
