/** Placeholder until traffic-shaped canaries land. */
export class TrafficShapes {}
