import Ajv from 'ajv';
import { IsOptional, IsString, Matches, validateSync } from 'class-validator';
import { classSchema } from './class-schema';

class Patterned {
  @IsOptional() @IsString() @Matches(/^[a-z]+$/) plain?: string;
  @IsOptional() @IsString() @Matches(/^\p{Lu}\d$/u) unicode?: string;
  @IsOptional() @IsString() @Matches(/^ab+$/g) global?: string;
  @IsOptional() @IsString() @Matches(/^[a-z]+$/i) ignoreCase?: string;
  @IsOptional() @IsString() @Matches('^[a-z]+$', 'i') ignoreCaseByModifier?: string;
  @IsOptional() @IsString() @Matches(/^end$/m) multiline?: string;
  @IsOptional() @IsString() @Matches(/^a.b$/s) dotAll?: string;
}

const SAMPLES = ['abc', 'ABC', 'Ab', 'É7', 'E7', 'abbb', 'first\nend', 'end', 'a\nb', 'axb', '', '12'];

describe('classSchema of @Matches', () => {
  const { properties } = classSchema(Patterned).schema;

  it('keeps the pattern of a regex whose flags JSON Schema reads alike, and drops the others', () => {
    expect(properties.plain.pattern).toBe('^[a-z]+$');
    expect(properties.unicode.pattern).toBe('^\\p{Lu}\\d$');
    expect(properties.global.pattern).toBe('^ab+$');
    for (const name of ['ignoreCase', 'ignoreCaseByModifier', 'multiline', 'dotAll'])
      expect(properties[name]).not.toHaveProperty('pattern');
  });

  it('never describes a rule other than it is: where the schema has a pattern, it accepts exactly what the rule accepts', () => {
    const ajv = new Ajv({ strict: false });
    for (const [name, schema] of Object.entries(properties)) {
      const describes = ajv.compile(schema);
      for (const sample of SAMPLES) {
        const accepted = validateSync(Object.assign(new Patterned(), { [name]: sample })).length === 0;
        // Without a pattern the schema says nothing about the text: the rule stays the service's.
        expect({ name, sample, accepted: describes(sample) }).toEqual({
          name,
          sample,
          accepted: schema.pattern === undefined ? true : accepted,
        });
      }
    }
  });
});
