/** Receiving: the wallet's address as a QR code (drawn as SVG, no HTML injected) and as text. */
import { encode } from "uqr";
import { CopyButton } from "../../components/CopyButton.tsx";
import { networkName } from "./network.ts";
import type { Wallet } from "./types.ts";

/** The QR matrix as SVG squares, with a quiet zone of 4 modules. */
export function QrCode({ text, label }: { text: string; label: string }) {
  const { data: matrix } = encode(text);
  const size = matrix.length + 8;
  const cells = [];
  for (let y = 0; y < matrix.length; y++) {
    for (let x = 0; x < matrix[y].length; x++) {
      if (matrix[y][x]) {
        cells.push(<rect key={`${x}-${y}`} x={x + 4} y={y + 4} width={1} height={1} />);
      }
    }
  }
  return (
    <svg
      class="qr-code"
      data-testid="qr-code"
      role="img"
      aria-label={label}
      viewBox={`0 0 ${size} ${size}`}
      width={240}
      height={240}
      shape-rendering="crispEdges"
    >
      <rect x={0} y={0} width={size} height={size} fill="#fff" />
      <g fill="#000">{cells}</g>
    </svg>
  );
}

export function Receive({ wallet }: { wallet: Wallet }) {
  return (
    <section>
      <h1>Receive</h1>
      <p>
        To receive tokens, give the sender this address. Send only on{" "}
        <strong>{networkName(wallet.chainId)}</strong>: tokens sent on another network do not arrive
        here.
      </p>
      <QrCode text={wallet.address} label={`QR code of your address ${wallet.address}`} />
      <p class="address-line">
        <span class="mono break" data-testid="receive-address">{wallet.address}</span>{" "}
        <CopyButton text={wallet.address} label="Copy address" />
      </p>
    </section>
  );
}
