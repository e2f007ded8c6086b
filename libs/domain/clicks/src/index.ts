export * from './click-event';
export * from './ports';
export * from './click-buffer';
export * from './click-enricher';
export * from './aggregation';
export * from './time-range';
