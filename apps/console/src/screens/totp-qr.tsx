import { useEffect, useState } from 'preact/hooks';

/** How the authenticator's QR code is drawn (the e2e draws the same URI the same way to compare). */
export const TOTP_QR_OPTIONS = { type: 'svg', errorCorrectionLevel: 'M', margin: 2 } as const;

/**
 * The otpauth URI of a new second factor as a QR code, drawn here in the browser (the `qrcode`
 * package, loaded when needed): the secret never leaves the page, and nothing is fetched.
 */
export function TotpQr({ uri }: { uri: string }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    setSrc(null);
    import('qrcode')
      .then((qr) => qr.default.toString(uri, TOTP_QR_OPTIONS))
      .then((svg) => current && setSrc(`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`))
      .catch(() => current && setSrc(''));
    return () => {
      current = false;
    };
  }, [uri]);
  if (src === '') return <p class="error">The QR code could not be drawn: use the secret below.</p>;
  return src ? (
    <img id="totp-qr" class="qr" src={src} width={200} height={200} alt="QR code of the new secret, for your authenticator app to scan" />
  ) : (
    <p aria-busy="true">Drawing the QR code…</p>
  );
}
