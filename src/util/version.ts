// The trtx version, reported by `--version` and written into SARIF and JUnit
// documents; kept equal to package.json's by test/report-sarif.test.ts.
export const TRTX_VERSION = '0.1.0';
