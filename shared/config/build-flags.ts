/**
 * The name esbuild's `define` replaces with "off" when it bundles the payout worker for a stage
 * deployed without KYC gating (PayrelayFunction's `kycGating`). The worker and its settings test it
 * written out (`process.env.PAYRELAY_KYC_GATE_BUILD`): esbuild replaces each occurrence with the
 * constant, drops the branch that wires the gate, and with it the gate's modules (about 20 KiB and
 * their start-up work), and the settings refuse KYC_GATING=on in such a bundle. Unbundled (tests,
 * npm start) and in a stage with gating the name is not "off", and the gate is there.
 */
export const KYC_GATE_BUILD_FLAG = 'process.env.PAYRELAY_KYC_GATE_BUILD';
