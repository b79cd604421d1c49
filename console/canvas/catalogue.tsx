import { useEffect, useRef, useState } from 'preact/hooks';
import type { NodeType } from '../api-types';
import { KINDS, kindOf } from './workflow-graph';

interface CatalogueProps {
  types: readonly NodeType[];
  /** Triggers are offered only while the workflow has none (it has exactly one). */
  hasTrigger: boolean;
  /** Where the new node goes, said on the buttons: "after if (true)". */
  after: string | null;
  onPick(type: NodeType): void;
  onClose(): void;
}

/** The node types to add, grouped by kind and filtered as you type (name, type or description). */
export function Catalogue({ types, hasTrigger, after, onPick, onClose }: CatalogueProps) {
  const [search, setSearch] = useState('');
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const words = search.toLowerCase().split(/\s+/).filter(Boolean);
  // The newest version of each type.
  const newest = [...new Map([...types].sort((a, b) => a.version - b.version).map((t) => [t.type, t])).values()];
  const shown = newest.filter(
    (t) => (!t.trigger || !hasTrigger) && words.every((w) => `${t.displayName} ${t.type} ${t.description}`.toLowerCase().includes(w)),
  );
  return (
    <section
      class="catalogue"
      aria-label="Add a node"
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          onClose();
        }
      }}
    >
      <div class="section-head">
        <h2>Add a node{after ? ` after ${after}` : ''}</h2>
        <button type="button" class="link" onClick={onClose}>
          Close
        </button>
      </div>
      <label>
        Search node types
        <input
          ref={input}
          type="search"
          value={search}
          placeholder="e.g. http, merge, collection"
          onInput={(e) => setSearch(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && shown.length) {
              e.preventDefault();
              onPick(shown[0]);
            }
          }}
        />
      </label>
      {shown.length === 0 && <p class="muted">No node type matches.</p>}
      {KINDS.map((kind) => {
        const group = shown.filter((t) => kindOf(t) === kind);
        if (!group.length) return null;
        return (
          <div key={kind} class="catalogue-group" role="group" aria-label={kind}>
            <h3>{kind}</h3>
            <ul>
              {group.map((t) => (
                <li key={t.type} class="catalogue-entry">
                  <button type="button" class="catalogue-item" onClick={() => onPick(t)} aria-describedby={`catalogue-${t.type}`}>
                    <span class="visually-hidden">Add </span>
                    <strong>{t.displayName}</strong> <code class="muted">({t.type})</code>
                  </button>
                  <span class="small muted" id={`catalogue-${t.type}`}>
                    {t.description}
                  </span>
                </li>
              ))}
            </ul>
          </div>
        );
      })}
    </section>
  );
}
