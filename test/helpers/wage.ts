/** The wage fixture (test/fixtures/defaults/wage.csv): its attributes as a spec types them. */
export const WAGE_ATTRIBUTES = {
  age: { type: 'quasi-identifying', hierarchy: { intervals: [5, 10, 20] } },
  sex: { type: 'quasi-identifying', hierarchy: { groups: [{ F: '*', M: '*' }] } },
  education: {
    type: 'quasi-identifying',
    hierarchy: {
      groups: [{ primary: 'school', secondary: 'school', college: 'higher', graduate: 'higher' }],
    },
  },
  union: { type: 'insensitive' },
  wage: { type: 'sensitive' },
};
