import { expect, test } from 'vitest';
import { allowedMethods } from './allowed-methods.js';

const routes = [
  { method: 'POST', url: '/v1/chat/completions', schema: undefined },
  { method: 'OPTIONS', url: '*', schema: undefined },
  { method: 'GET', url: '/v1/models', schema: undefined },
  { method: 'GET', url: '/v1/models/:id', schema: undefined },
  { method: 'DELETE', url: '/api/router/keys/:id', schema: undefined },
];

test('default: the methods of the routes whose pattern matches the path', () => {
  expect(allowedMethods(routes, '/v1/chat/completions')).toEqual(['POST']);
  expect(allowedMethods(routes, '/v1/models/tiny')).toEqual(['GET']);
  expect(allowedMethods(routes, '/api/router/keys/k1')).toEqual(['DELETE']);
});

test('edge: the catch-all is no route of a path; an empty param matches nothing', () => {
  expect(allowedMethods(routes, '/v1/nope')).toEqual([]);
  expect(allowedMethods(routes, '/v1/models/')).toEqual([]);
  expect(allowedMethods(routes, '/v1/models/a/b')).toEqual([]);
});
