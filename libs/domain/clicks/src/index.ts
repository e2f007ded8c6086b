export * from './click-event';
export * from './ports';
export * from './click-buffer';
export * from './minute-aggregator';
export * from './time-range';
