/**
 * Stripe's Payment Element, used when the checkout's payment provider is `stripe` (the API has
 * Stripe keys). Stripe.js must come from https://js.stripe.com (Stripe does not allow bundling
 * it), so this module adds its script tag on first use; the page's Content-Security-Policy allows
 * that origin (docs/web.md, "Payments"). The publishable key is public and set when the client is
 * built (`AGORA_WEB_STRIPE_PUBLISHABLE_KEY`, a `<meta name="agora-stripe-key">` in index.html).
 *
 * Not exercised by the tests here: the machine has no internet, so js.stripe.com cannot load.
 */

// deno-lint-ignore no-explicit-any
type StripeJs = any;

export const stripePublishableKey =
  document.querySelector<HTMLMetaElement>('meta[name="agora-stripe-key"]')?.content ?? "";

let loading: Promise<StripeJs> | null = null;

function loadStripeJs(): Promise<StripeJs> {
  loading ??= new Promise((resolve, reject) => {
    const existing = (globalThis as { Stripe?: StripeJs }).Stripe;
    if (existing) return resolve(existing);
    const script = document.createElement("script");
    script.src = "https://js.stripe.com/v3/";
    script.async = true;
    script.onload = () => {
      const loaded = (globalThis as { Stripe?: StripeJs }).Stripe;
      if (loaded) resolve(loaded);
      else reject(new Error("Stripe.js loaded but did not start."));
    };
    script.onerror = () => {
      loading = null;
      reject(new Error("Stripe.js could not be loaded from js.stripe.com."));
    };
    document.head.append(script);
  });
  return loading;
}

export interface MountedPayment {
  /** Confirms the payment; resolves with an error message, or null when it went through. */
  confirm(returnUrl: string): Promise<string | null>;
  destroy(): void;
}

/** Mounts the Payment Element for `clientSecret` into `target`. */
export async function mountPaymentElement(
  target: HTMLElement,
  clientSecret: string,
  brandColour: string,
): Promise<MountedPayment> {
  if (!stripePublishableKey) {
    throw new Error(
      "This site was built without Stripe's publishable key (AGORA_WEB_STRIPE_PUBLISHABLE_KEY).",
    );
  }
  const Stripe = await loadStripeJs();
  const stripe = Stripe(stripePublishableKey);
  const elements = stripe.elements({
    clientSecret,
    appearance: { theme: "stripe", variables: { colorPrimary: brandColour } },
  });
  const element = elements.create("payment", { layout: "tabs" });
  element.mount(target);
  return {
    async confirm(returnUrl: string) {
      const { error } = await stripe.confirmPayment({
        elements,
        confirmParams: { return_url: returnUrl },
        redirect: "if_required",
      });
      return error ? String(error.message ?? "The payment did not go through.") : null;
    },
    destroy() {
      element.destroy();
    },
  };
}
