import { answerText } from './chat.service';

describe('the text of a chat answer', () => {
  it.each([
    ['Etna is 3,357 m tall', 'Etna is 3,357 m tall'],
    [{ answer: 'a', text: 'b' }, 'a'],
    [{ text: 'b', content: 'd' }, 'b'],
    [{ output: 'c' }, 'c'],
    [{ content: 'd' }, 'd'],
    [['only one'], 'only one'],
    [[{ answer: 'in an item' }], 'in an item'],
  ])('reads %j as %j', (output, text) => {
    expect(answerText(output)).toBe(text);
  });

  it.each([[null], [42], [{ answer: 7 }], [['one', 'two']], [{}], [undefined]])('finds no text in %j', (output) => {
    expect(answerText(output)).toBeNull();
  });
});
