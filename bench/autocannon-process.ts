/**
 * autocannon in a process of its own (bench/gateway-load.ts): the load generator's CPU then stays
 * out of the measured server's threads. Takes autocannon's options as JSON in argv[2]; prints its
 * result as JSON, with the CPU this process used during the run (µs).
 */
import autocannon from 'autocannon';

const started = process.cpuUsage();
const result = await autocannon(JSON.parse(process.argv[2]!));
const used = process.cpuUsage(started);
process.stdout.write(JSON.stringify({ ...result, cpuMicros: used.user + used.system }));
