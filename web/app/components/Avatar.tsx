import { apiOrigin } from "../lib/client.ts";

/**
 * A person's picture, or their initials on a colour derived from their id. An uploaded picture's
 * URL is the API's (`/api/users/<id>/image?v=…`), fetched with the session cookie.
 */
export function Avatar(
  { name, image, id, size = 32, online }: {
    name: string;
    image?: string | null;
    id: string;
    size?: number;
    online?: boolean;
  },
) {
  let hash = 0;
  for (const ch of id) hash = (hash * 31 + ch.charCodeAt(0)) | 0;
  const hue = Math.abs(hash) % 360;
  const initials = name.split(/\s+|[._-]/).filter(Boolean).slice(0, 2).map((p) => p[0])
    .join("").toUpperCase() || "?";
  return (
    <span class="avatar" style={{ width: `${size}px`, height: `${size}px` }} aria-hidden="true">
      {image
        ? (
          <img
            src={image.startsWith("/") ? `${apiOrigin}${image}` : image}
            alt=""
            width={size}
            height={size}
          />
        )
        : (
          <span class="avatar-initials" style={{ background: `hsl(${hue} 50% 30%)` }}>
            {initials}
          </span>
        )}
      {online !== undefined && <span class={online ? "presence on" : "presence"} />}
    </span>
  );
}
