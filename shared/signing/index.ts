export {
  DEFAULT_SIGNING_PROFILE,
  SigningProfileError,
  makeSigningProfile,
  profileName,
  resolveSigningProfile,
  type BodySerialization,
  type SecretRole,
  type SignatureEncoding,
  type SigningAlgorithm,
  type SigningOperation,
  type SigningProfile,
  type SigningSecrets,
} from './profile';
export { serializeForSigning, signPayload, verifyPayload, verifySignedText, withSignature } from './sign';
export { cutTopLevelMember, type MemberCut } from './json-member';
export { calibrate, calibrateReceived, inferSigningOperation } from './calibrate';
