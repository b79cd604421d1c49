/** A slice of a listing, as the list endpoints take it and the stores read it. */
export interface PageRequest {
  offset: number;
  limit: number;
}

/** One page of a listing and the size of the whole listing. */
export interface Page<T> {
  items: T[];
  total: number;
}
