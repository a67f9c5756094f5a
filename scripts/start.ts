// Placeholder until the local-network launcher lands (issue 7).
console.log('gpumesh: the local network launcher is coming; run `npm test` meanwhile.');
