/* The tiny program spawn_exec starts: exits with status 0 at once. */
int main(void)
{
	return 0;
}
