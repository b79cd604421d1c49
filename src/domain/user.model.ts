export interface User {
  id: string;
  name: string;
  email: string | null;
  isAdmin: boolean;
  createdAt: Date;
}
