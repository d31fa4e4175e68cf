/** Where people reach the deployment (`PUBLIC_URL`): links in e-mails and site pages start here. */
export function publicUrl(env: NodeJS.ProcessEnv = process.env): string {
  return (env.PUBLIC_URL ?? 'http://127.0.0.1:4000').replace(/\/+$/, '');
}
