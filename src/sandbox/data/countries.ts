// The sandbox's countries, shared by all four fake vendors (the same twelve everywhere).

export interface IdName {
  id: string;
  name: string;
}

export const COUNTRIES = [
  { id: 'PL', name: 'Poland' },
  { id: 'HU', name: 'Hungary' },
  { id: 'CZ', name: 'Czech Republic' },
  { id: 'RO', name: 'Romania' },
  { id: 'TR', name: 'Turkey' },
  { id: 'CN', name: 'China' },
  { id: 'US', name: 'United States' },
  { id: 'DE', name: 'Germany' },
  { id: 'ID', name: 'Indonesia' },
  { id: 'BR', name: 'Brazil' },
  { id: 'IN', name: 'India' },
  { id: 'JP', name: 'Japan' },
] as const;
