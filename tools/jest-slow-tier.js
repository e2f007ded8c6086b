// Integration and e2e suites wait on real servers and child processes: allow them minutes, not 5 s.
jest.setTimeout(120000);
